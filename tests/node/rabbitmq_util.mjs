// A real rabbitmq-server (Debian's) for the queue tests: its own node name, ports and data
// dir under a temp dir, no plugins, run as the `rabbitmq` user when the test runs as root
// (Erlang's cookie and the data dir belong to it). Stopped by PID with SIGTERM, which the
// rabbitmq-server script passes to the VM for a clean shutdown.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
export const HAVE_RABBITMQ = !spawnSync('test', ['-x', RABBITMQ_SERVER]).status;

export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function rabbitmqUser() {
  if (process.getuid() !== 0) return {};
  const uid = Number(spawnSync('id', ['-u', 'rabbitmq']).stdout);
  const gid = Number(spawnSync('id', ['-g', 'rabbitmq']).stdout);
  return { uid, gid };
}

// A broker description: start() and stop() can be called again on the same ports and data.
export async function makeBroker() {
  const dir = mkdtempSync(join(tmpdir(), 'surge-rabbitmq-'));
  const user = rabbitmqUser();
  const plugins = join(dir, 'enabled_plugins');
  writeFileSync(plugins, '[].\n');
  if (user.uid !== undefined) {
    chownSync(dir, user.uid, user.gid);
    chownSync(plugins, user.uid, user.gid);
  }
  const port = await freePort();
  const distPort = await freePort();
  const env = {
    PATH: process.env.PATH,
    HOME: user.uid !== undefined ? '/var/lib/rabbitmq' : process.env.HOME,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_NODENAME: `surge-test-${port}@localhost`,
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: plugins,
  };
  const broker = { dir, port, url: `amqp://guest:guest@127.0.0.1:${port}/`, proc: null, log: '' };
  broker.start = () => new Promise((resolve, reject) => {
    broker.log = '';  // the ready line of an earlier start does not count
    const proc = spawn(RABBITMQ_SERVER, [], { env, ...user, stdio: ['ignore', 'pipe', 'pipe'] });
    broker.proc = proc;
    const timer = setTimeout(() => reject(new Error(`rabbitmq-server not up after 60 s:\n${broker.log}`)), 60_000);
    const onData = (data) => {
      broker.log += data;
      if (/Starting broker\.\.\. completed/.test(broker.log.slice(-4096))) {
        clearTimeout(timer);
        resolve(broker);
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`rabbitmq-server exited with ${code}:\n${broker.log}`)); });
  });
  broker.stop = () => new Promise((resolve) => {
    const proc = broker.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.removeAllListeners('exit');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
    proc.on('exit', () => { clearTimeout(timer); resolve(); });
    proc.kill('SIGTERM');
  });
  return broker;
}
