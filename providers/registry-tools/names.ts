/**
 * Registry tools are named `{server}__{tool}`: the server's registry path
 * without its slash, two underscores, the tool's own name (`everything__echo`).
 * Two underscores because server paths and tool names may each hold one.
 */
export const SEPARATOR = '__';

export const qualify = (server: string, tool: string) => `${server}${SEPARATOR}${tool}`;
