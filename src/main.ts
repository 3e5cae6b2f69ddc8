#!/usr/bin/env node
import { type Logger, pino } from 'pino';
import { addApiKey } from './auth/api-keys.js';
import { CliError } from './cli/exit-codes.js';
import { isServerCommand, runClient } from './cli/index.js';
import { parseServerCommand, type ServerCommand } from './cli/server-args.js';
import { ConfigError } from './config/error.js';
import { loadConfig } from './config/settings.js';
import type { AnySkill } from './engine/skill.js';
import { routeOutputToLogger } from './logging/route.js';
import { rotateSigningKey } from './push/signing-keys.js';
import { cardKeysDir } from './server/card-keys.js';
import { startTracing } from './telemetry/sdk.js';

/** The server's logger, once `serve` has made it: a failed start after that is its `fatal` record. */
let serverLogger: Logger | undefined;
/** The operator's plain words on stderr, past the log routing (see the end of this file). */
let plainStderr = (text: string): void => {
  process.stderr.write(text);
};

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  // The client commands, help and every unknown command line are the CLI's: each ends with its
  // documented exit code, and nothing there starts a server.
  if (!isServerCommand(argv[0])) {
    process.exitCode = await runClient(argv);
    return;
  }
  let command: ServerCommand;
  try {
    command = parseServerCommand(argv);
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    process.stderr.write(`taskhandle ${argv[0]}: ${err.message}\n`);
    process.exitCode = err.exitCode;
    return;
  }
  if (command.name === 'help') {
    process.stdout.write(`${command.text}\n`);
    return;
  }
  if (command.name === 'keys rotate') {
    const config = loadConfig();
    const dir = command.card ? cardKeysDir(config.keysDir) : config.keysDir;
    if (command.card && config.CARD_SIGNING === 'false')
      throw new ConfigError('CARD_SIGNING=false: the card is not signed, so it has no key to rotate');
    if (command.card && config.CARD_SIGNING_KEY_FILE !== undefined)
      throw new ConfigError(
        `CARD_SIGNING_KEY_FILE=${config.CARD_SIGNING_KEY_FILE}: the card is signed with your key; to rotate, put the new key in that file beside the old one (a JWK Set), and take the old one out later`,
      );
    console.log(JSON.stringify({ rotated: true, kid: await rotateSigningKey(dir), dir }));
    return;
  }
  if (command.name === 'api-keys add') {
    const { API_KEYS_FILE } = loadConfig();
    if (!API_KEYS_FILE)
      throw new ConfigError('API_KEYS_FILE: set it to the file the server reads its keys from');
    const { principal, tenant, label } = command;
    const key = addApiKey(API_KEYS_FILE, principal, tenant, label);
    console.log(JSON.stringify({ principal, tenant, apiKey: key, file: API_KEYS_FILE }));
    return;
  }
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (command.skills) env.SKILLS = command.skills.join(',');
  const skills = command.conformance ? [await conformanceSetup(env)] : [];
  // The one validation of the settings: the server starts on this config (startServer), which
  // createServer({ env }) would validate again.
  const config = loadConfig(env);
  const logger = pino({ level: config.LOG_LEVEL, base: { service: 'taskhandle' } });
  // From here on, every line the process writes is one pino record (see logging/route.ts).
  plainStderr = routeOutputToLogger(logger).stderr;
  serverLogger = logger;
  process.on('uncaughtException', (err, origin) => {
    logger.fatal({ err, origin }, 'uncaught exception: stopping');
    process.exit(1);
  });
  // Before the first span: the SDK (only when OTEL_* variables ask for it) must be registered first.
  const tracing = await startTracing(process.env, logger);
  // Loaded here, not at the top: the client commands (every CLI call) never pay for the server's graph.
  const { startServer } = await import('./server/create.js');
  const starting = startServer(config, { skills, logger });
  // Listened for before the server starts: a signal right after the `listening` line (or during the
  // start) still stops it in order, rather than killing it with the store open.
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'signal received');
    starting.then(
      (server) =>
        server.close().then(
          // The last spans (those of the stop itself) leave before the process does.
          async () => {
            await tracing?.stop();
            process.exit(0);
          },
          (err: unknown) => {
            logger.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        ),
      // A start that failed is reported (and exits) below, in main's caller.
      () => {},
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  await starting;
}

/**
 * `serve --conformance`: the a2a-tck fixture skill as the default skill, and the settings the kit
 * needs where the environment leaves them unset (see docs/CONFORMANCE.md).
 */
async function conformanceSetup(env: NodeJS.ProcessEnv): Promise<AnySkill> {
  const { conformanceSkill } = await import('./conformance/skill.js');
  env.DEFAULT_SKILL = conformanceSkill.id;
  // A file of its own: SQLite serves one server at a time, and `npm start` may be running too.
  env.DATABASE_URL ??= 'sqlite:./data/conformance.db';
  // The kit leaves many fixture tasks open (working, idle) at once: give them room to run.
  env.RUNNER_CONCURRENCY ??= '1000';
  // The kit's webhook receiver listens on localhost: open exactly that. Its other webhooks point
  // at example.com and must never be called from a test machine: close public addresses.
  env.PUSH_ALLOW ??= 'localhost,127.0.0.0/8,::1';
  env.PUSH_ALLOW_PUBLIC ??= 'false';
  return conformanceSkill;
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    // Our own words for the operator, as plain text on stderr even once the output goes to the log.
    plainStderr(`${err.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  if (serverLogger) serverLogger.fatal({ err }, 'start failed: stopping');
  else console.error(err);
  process.exit(1);
});
