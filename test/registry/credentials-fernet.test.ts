import { randomBytes } from 'node:crypto';
import { statSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import t from 'tap';
import { createFernet, FernetError } from '../../core/crypto/fernet.ts';
import { ENCRYPTION_KEY_FILE, loadSecrets, SECRET_KEY_FILE } from '../../core/secrets.ts';

const tempDir = () => mkdtempSync(join(tmpdir(), 'sb-secrets-'));

// The published Fernet spec vector (github.com/fernet/spec generate.json / verify.json).
const VECTOR = {
  secret: 'cw_0x689RpI-jtRR7oE8h_eQsKImvJapLeSbXpwF4e4=',
  token: 'gAAAAAAdwJ6wAAECAwQFBgcICQoLDA0ODy021cpGVWKZ_eEwCGM4BLLF_5CV9dOPmrhuVUPgJobwOz7JcbmrR64jVmpU4IwqDA==',
  now: 499162800,
  src: 'hello',
};

t.test('decrypts the published Fernet vector', async (t) => {
  const f = createFernet(VECTOR.secret);
  t.equal(f.decryptString(VECTOR.token, { ttlSeconds: 60, nowSeconds: VECTOR.now + 10 }), VECTOR.src);
  t.throws(() => f.decrypt(VECTOR.token, { ttlSeconds: 60, nowSeconds: VECTOR.now + 61 }), /expired/);
});

t.test('round-trips and uses a fresh IV per token', async (t) => {
  const key = randomBytes(32).toString('base64');
  const f = createFernet(key);
  const a = f.encrypt('sk-secret-value');
  const b = f.encrypt('sk-secret-value');
  t.not(a, b);
  t.notMatch(a, /sk-secret/);
  t.equal(f.decryptString(a), 'sk-secret-value');
  t.equal(Buffer.from(a, 'base64url')[0], 0x80, 'version byte');
  t.equal(f.decryptString(f.encrypt('')), '');
  const long = 'x'.repeat(1000);
  t.equal(f.decryptString(f.encrypt(long)), long);
});

t.test('detects tampering and wrong keys', async (t) => {
  const f = createFernet(randomBytes(32).toString('base64url'));
  const token = f.encrypt('bearer-credential');
  const raw = Buffer.from(token, 'base64url');
  for (const at of [0, 5, 12, 30, raw.length - 1]) {
    const bad = Buffer.from(raw);
    bad[at] ^= 0x01;
    t.throws(() => f.decrypt(bad.toString('base64url')), FernetError, `flipped byte ${at}`);
  }
  t.throws(() => f.decrypt(raw.subarray(0, raw.length - 1).toString('base64url')), /length/);
  t.throws(() => f.decrypt('not a token!'), /base64/);
  const other = createFernet(randomBytes(32));
  t.throws(() => other.decrypt(token), /signature/);
  t.throws(() => createFernet('c2hvcnQ='), /32 bytes/);
});

t.test('loadSecrets: env wins, otherwise generated once, mode 0600, reused', async (t) => {
  const dir = tempDir();
  const first = loadSecrets(dir, {});
  t.ok(first.secretKey.length >= 32);
  t.ok(createFernet(first.encryptionKey), 'generated key is a valid Fernet key');
  for (const name of [SECRET_KEY_FILE, ENCRYPTION_KEY_FILE])
    t.equal(statSync(join(dir, name)).mode & 0o777, 0o600, `${name} is 0600`);
  const again = loadSecrets(dir, {});
  t.same(again, first, 'reused after restart');
  t.not(loadSecrets(tempDir(), {}).secretKey, first.secretKey, 'another DATA_DIR gets other secrets');

  const envKey = randomBytes(32).toString('base64');
  const fromEnv = loadSecrets(dir, { SECRET_KEY: 'from-env', ENCRYPTION_KEY: envKey });
  t.same([fromEnv.secretKey, fromEnv.encryptionKey], ['from-env', envKey]);
  const mixed = loadSecrets(dir, { SECRET_KEY: 'from-env' });
  t.equal(mixed.encryptionKey, first.encryptionKey, 'the unset one still comes from DATA_DIR');

  t.throws(() => loadSecrets(dir, { ENCRYPTION_KEY: 'too-short' }), { code: 'SB_ERR_CONFIG_INVALID' });
  const encFile = join(dir, ENCRYPTION_KEY_FILE);
  writeFileSync(encFile, 'nope');
  t.throws(() => loadSecrets(dir, {}), { code: 'SB_ERR_SECRETS_UNREADABLE' });
  t.equal(readFileSync(encFile, 'utf8'), 'nope', 'a broken key file is never silently replaced');
});
