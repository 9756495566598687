import type { Collection, Store } from '../../core/store.ts';
import type { Tool } from '../../core/primitives/tools.ts';

/**
 * Tool records registered with POST /tools: a catalogue entry with no MCP
 * server behind it (spec 4.4), kept in the core store so every replica and a
 * restart see them.
 */
export class StandaloneTools {
  private readonly col: Collection<Tool>;

  constructor(store: Store, instance: string) {
    this.col = store.collection<Tool>(`tools_registry_standalone:${instance}`);
  }

  async put(tool: Tool): Promise<Tool> {
    await this.col.set(tool.name, structuredClone(tool));
    return structuredClone(tool);
  }

  get(name: string): Promise<Tool | undefined> {
    return this.col.get(name);
  }

  async all(): Promise<Tool[]> {
    const out: Tool[] = [];
    for await (const [, t] of this.col.entries()) out.push(t);
    return out;
  }

  delete(name: string): Promise<boolean> {
    return this.col.delete(name);
  }
}
