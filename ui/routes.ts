import type { ComponentType } from 'preact';
import { platformRoutes } from './platform/routes.ts';
import { registryRoutes } from './registry/routes.ts';

export type NavGroup = 'Registry' | 'Platform' | 'Admin';

/** One console page. Its component gets the path parameters as props (`/servers/:path*` -> `{path}`). */
export interface Route {
  path: string;
  title: string;
  // biome-ignore lint/suspicious/noExplicitAny: each page takes its own path-parameter props; the router passes what the path matched.
  component: ComponentType<any>;
  nav?: boolean;
  group: NavGroup;
  /** Needs the registry surface (hidden when this process runs only the platform). */
  registry?: boolean;
  /** Shown in the sidebar to admins only. */
  admin?: boolean;
}

export const routes: Route[] = [
  ...registryRoutes,
  ...platformRoutes.map((r) => ({ ...r, group: 'Platform' as const })),
];
