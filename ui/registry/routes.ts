import type { Route } from '../routes.ts';
import { GroupsPage } from './admin.tsx';
import { AgentDetailPage, AgentsPage } from './agents.tsx';
import { ServerDetailPage } from './server-detail.tsx';
import { EditServerPage, RegisterServerPage } from './server-form.tsx';
import { ServersPage } from './servers.tsx';
import { SkillDetailPage, SkillsPage } from './skills.tsx';
import { TokensPage } from './tokens.tsx';

/** The registry half of the console; order here is the sidebar's order. */
export const registryRoutes: Route[] = [
  { path: '/servers', title: 'Servers', component: ServersPage, group: 'Registry', registry: true },
  {
    path: '/servers/new',
    title: 'Register server',
    component: RegisterServerPage,
    group: 'Registry',
    registry: true,
    nav: false,
  },
  {
    path: '/servers/:path*',
    title: 'Server',
    component: ServerDetailPage,
    group: 'Registry',
    registry: true,
    nav: false,
  },
  {
    path: '/edit/:path*',
    title: 'Edit server',
    component: EditServerPage,
    group: 'Registry',
    registry: true,
    nav: false,
  },
  { path: '/agents', title: 'Agents', component: AgentsPage, group: 'Registry', registry: true },
  { path: '/agents/:path*', title: 'Agent', component: AgentDetailPage, group: 'Registry', registry: true, nav: false },
  { path: '/skills', title: 'Skills', component: SkillsPage, group: 'Registry', registry: true },
  { path: '/skills/:name', title: 'Skill', component: SkillDetailPage, group: 'Registry', registry: true, nav: false },
  { path: '/tokens', title: 'Tokens', component: TokensPage, group: 'Registry', registry: true },
  {
    path: '/admin/groups',
    title: 'Groups & scopes',
    component: GroupsPage,
    group: 'Admin',
    registry: true,
    admin: true,
  },
];
