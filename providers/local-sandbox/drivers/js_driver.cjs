// The warm JavaScript interpreter of one code-interpreter session (see python_driver.py for the protocol).
// Cells run as scripts in this context, so top-level declarations persist across cells as in a console.
'use strict';
const net = require('node:net');
const vm = require('node:vm');
const util = require('node:util');
const { createRequire } = require('node:module');

globalThis.require = createRequire(`${process.cwd()}/`);
const ctl = new net.Socket({ fd: 3, readable: true, writable: true });
const write = (stream, data) => new Promise((resolve) => stream.write(data, () => resolve()));
let buffered = '';
let chain = Promise.resolve();
// A callback that throws after its cell ended must not take the session's variables with it.
process.on('uncaughtException', (e) => process.stderr.write(`Uncaught ${e?.stack ? e.stack : e}\n`));

async function run(msg) {
  let result = null;
  let error = null;
  try {
    let value = vm.runInThisContext(msg.code, { filename: 'cell.js' });
    if (value && typeof value.then === 'function') value = await value;
    if (value !== undefined) result = util.inspect(value, { depth: 4 });
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    process.stderr.write(
      `${(err.stack || String(err))
        .split('\n')
        .filter((l) => !l.includes('js_driver.cjs') && !l.includes('node:'))
        .join('\n')}\n`,
    );
    error = `${err.name}: ${err.message}`;
  }
  await write(process.stdout, msg.token);
  await write(process.stderr, msg.token);
  ctl.write(`${JSON.stringify({ result, error })}\n`);
}

ctl.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let i;
  while ((i = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, i);
    buffered = buffered.slice(i + 1);
    const msg = JSON.parse(line);
    chain = chain.then(() => run(msg));
  }
});
ctl.on('end', () => process.exit(0));
