// The official MCP TypeScript SDK's client (@modelcontextprotocol/sdk,
// pinned in package.json) against a server over stdio: it connects, lists
// the tools, and calls the ones it is asked to, then prints one JSON object
// with the server's name, the tools listed and each call's result.
//
//   node mcp-check.mjs '{"roots": ["/dir"], "calls": [{"name": "t", "arguments": {}}]}' COMMAND ARGS...
//
// `roots`: the client declares the roots capability and names these
// directories (as file:// URIs) when the server asks; absent, it declares
// none. Used by tests/cli/mcp.rs.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [plan, command, ...args] = process.argv.slice(2);
const { roots, calls } = JSON.parse(plan);

const client = new Client(
  { name: "compactor-tests", version: "1.0.0" },
  { capabilities: roots ? { roots: { listChanged: false } } : {} },
);
if (roots) {
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: roots.map((dir) => ({ uri: `file://${dir}`, name: dir })),
  }));
}
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
await client.connect(transport);
const listed = await client.listTools();
const results = [];
for (const call of calls) {
  results.push({ name: call.name, result: await client.callTool(call) });
}
console.log(
  JSON.stringify({
    server: client.getServerVersion(),
    instructions: client.getInstructions(),
    tools: listed.tools,
    results,
  }),
);
await client.close();
