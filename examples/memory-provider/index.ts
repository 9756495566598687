/**
 * Entry of the example provider package. Switchboard imports this module (the
 * `switchboard.entry` of package.json) and reads its `providers` export: a list
 * of typed factories. Only types come from Switchboard, so at run time this
 * package depends on nothing but Node.
 */
import type { ProviderFactory } from '../../core/provider.ts';
import { jsonFileMemory } from './json-file-memory.ts';

export const providers: ProviderFactory[] = [jsonFileMemory as ProviderFactory];
