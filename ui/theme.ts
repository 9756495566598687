import { signal } from '@preact/signals';

export type Theme = 'light' | 'dark';
const KEY = 'sb-theme';

function initial(): Theme {
  const saved = localStorage.getItem(KEY);
  if (saved === 'light' || saved === 'dark') return saved;
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/** The theme is a data attribute on <html>; ui/styles/theme.css defines the colours of each. */
export const theme = signal<Theme>(initial());

export function applyTheme(t: Theme = theme.value): void {
  document.documentElement.dataset.theme = t;
}

export function toggleTheme(): void {
  theme.value = theme.value === 'dark' ? 'light' : 'dark';
  localStorage.setItem(KEY, theme.value);
  applyTheme();
}
