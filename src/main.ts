#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { addApiKey } from './auth/api-keys.js';
import { isClientCommand, runClient } from './cli/index.js';
import { ConfigError, loadConfig } from './config.js';
import type { AnySkill } from './engine/skill.js';
import { routeConsoleToLogger } from './logging/console.js';
import { rotateSigningKey } from './push/signing-keys.js';
import { startServer } from './server.js';

const USAGE = `usage: taskhandle serve [--conformance]
       taskhandle keys rotate
       taskhandle api-keys add --principal NAME --tenant NAME [--label TEXT]
       taskhandle submit|get|watch|cancel|result|list ...   (client: taskhandle help)

  serve              run the agent (settings from the environment; see README)
  --conformance      add the a2a-tck fixture skill and make it the default skill
  keys rotate        make a new webhook signing key in KEYS_DIR; a running server signs with it
                     within 10 s, and keeps the old public key published until its tokens expire
  api-keys add       make an API key for a principal of a tenant, add its hash to API_KEYS_FILE
                     and print the key (once: it is not stored); a running server accepts it
                     within seconds`;

async function main(): Promise<void> {
  // The client commands parse their own options (and exit with their documented codes).
  if (isClientCommand(process.argv[2])) {
    process.exitCode = await runClient(process.argv.slice(2));
    return;
  }
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      conformance: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
      principal: { type: 'string' },
      tenant: { type: 'string' },
      label: { type: 'string' },
    },
  });
  const command = positionals[0] ?? 'serve';
  if (command === 'keys' && positionals[1] === 'rotate' && !values.help) {
    const { keysDir } = loadConfig();
    console.log(JSON.stringify({ rotated: true, kid: await rotateSigningKey(keysDir), dir: keysDir }));
    return;
  }
  if (command === 'api-keys' && positionals[1] === 'add' && !values.help) {
    const { API_KEYS_FILE } = loadConfig();
    if (!API_KEYS_FILE)
      throw new ConfigError('API_KEYS_FILE: set it to the file the server reads its keys from');
    if (!values.principal || !values.tenant)
      throw new ConfigError('api-keys add: --principal and --tenant are required');
    const key = addApiKey(API_KEYS_FILE, values.principal, values.tenant, values.label);
    console.log(
      JSON.stringify({
        principal: values.principal,
        tenant: values.tenant,
        apiKey: key,
        file: API_KEYS_FILE,
      }),
    );
    return;
  }
  if (values.help || command !== 'serve') {
    console.log(USAGE);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  let skills: AnySkill[] = [];
  const env = { ...process.env };
  if (values.conformance) {
    // The fixture lives with the spec tests; it is compiled alongside the server.
    const { conformanceSkill } = await import('../spec-tests/fixture/conformance-skill.js');
    skills = [conformanceSkill];
    env.DEFAULT_SKILL = conformanceSkill.id;
    // The kit leaves many fixture tasks open (working, idle) at once: give them room to run.
    env.RUNNER_CONCURRENCY ??= '1000';
    // The kit's webhook receiver listens on localhost: open exactly that. Its other webhooks point
    // at example.com and must never be called from a test machine: close public addresses.
    env.PUSH_ALLOW ??= 'localhost,127.0.0.0/8,::1';
    env.PUSH_ALLOW_PUBLIC ??= 'false';
  }
  const config = loadConfig(env);
  const logger = pino({ level: config.LOG_LEVEL, base: { service: 'taskhandle' } });
  // From here on, every line the process writes is one pino record (see logging/console.ts).
  routeConsoleToLogger(logger);
  process.on('uncaughtException', (err, origin) => {
    logger.fatal({ err, origin }, 'uncaught exception: stopping');
    process.exit(1);
  });
  const server = await startServer({ config, skills, logger });
  const shutdown = (signal: string) => {
    server.logger.info({ signal }, 'signal received');
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        server.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    // Our own words for the operator, as plain text even once the console goes to the log.
    process.stderr.write(`${err.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  console.error(err);
  process.exit(1);
});
