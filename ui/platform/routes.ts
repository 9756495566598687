import type { ComponentType } from 'preact';
import { AgentEditPage } from './agent-edit-page.tsx';
import { AgentsPage } from './agents-page.tsx';
import { ChatPage } from './chat-page.tsx';
import { MemoryPage } from './memory-page.tsx';
import { ProvidersPage } from './providers-page.tsx';
import { SessionsPage } from './sessions-page.tsx';
import { TracePage } from './trace-page.tsx';
import { TracesPage } from './traces-page.tsx';
import './platform.css';

/**
 * The platform pages of the console (agents, chat, sessions, memory, traces, providers). The shell
 * (ui/main.tsx) mounts each under /ui<path>, and the sidebar lists those with `nav !== false` in its
 * Platform group, in this order. See ui/README.md for the conventions a page follows.
 */
export interface PlatformRoute {
  /** Under /ui, e.g. '/platform/agents' or '/platform/agents/:name' (':x' one segment, ':x*' the rest). */
  path: string;
  title: string;
  // biome-ignore lint/suspicious/noExplicitAny: pages take different props (their path parameters)
  component: ComponentType<any>;
  /** false keeps a detail page out of the sidebar. */
  nav?: boolean;
}

/** Views that belong in a reloadable URL (agent, session, namespace, search) are query parameters. */
export const platformRoutes: PlatformRoute[] = [
  { path: '/platform/agents', title: 'Agents', component: AgentsPage },
  { path: '/platform/new-agent', title: 'New agent', component: AgentEditPage, nav: false },
  { path: '/platform/agents/:name', title: 'Edit agent', component: AgentEditPage, nav: false },
  { path: '/platform/chat', title: 'Chat', component: ChatPage },
  { path: '/platform/sessions', title: 'Sessions', component: SessionsPage },
  { path: '/platform/memory', title: 'Memory', component: MemoryPage },
  { path: '/platform/traces', title: 'Traces', component: TracesPage },
  { path: '/platform/traces/:id', title: 'Trace', component: TracePage, nav: false },
  { path: '/platform/providers', title: 'Providers', component: ProvidersPage },
];
