import { signal } from '@preact/signals';
import { ApiError, api, markSignedIn } from './api.ts';

/** GET /api/auth/me: who the user is and what the UI should offer them. */
export interface Me {
  username: string;
  auth_method: string;
  provider: string;
  scopes: string[];
  groups: string[];
  can_modify_servers: boolean;
  is_admin: boolean;
  ui_permissions: Record<string, string[]>;
  accessible_servers: string[];
}

/**
 * undefined while loading; null when nobody is signed in (or the registry surface is not running, which has
 * the login); the user otherwise.
 */
export const me = signal<Me | null | undefined>(undefined);
/** Whether this process serves the registry surface (/api/auth/me exists). */
export const registryOn = signal(true);

export async function loadMe(): Promise<Me | null> {
  try {
    me.value = await api<Me>('/api/auth/me', { allow401: true });
    markSignedIn();
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) registryOn.value = false;
    me.value = null;
  }
  return me.value;
}

const bare = (p: string) => p.replace(/^\/+|\/+$/g, '');

/** Whether the user holds a UI permission (e.g. toggle_service) on `path` (or on all). */
export function can(action: string, path?: string): boolean {
  const m = me.value;
  if (!m) return false;
  if (m.is_admin) return true;
  const list = m.ui_permissions[action] ?? [];
  return list.includes('all') || (path !== undefined && list.some((p) => bare(p) === bare(path)));
}
