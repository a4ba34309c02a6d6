import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

const run = promisify(execFile);

/** Where Debian/Ubuntu put the PostgreSQL 15 server binaries (TEST_PG_BIN overrides). */
export const PG_BIN = process.env.TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A TCP port nobody listens on right now (the kernel's pick, released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Why a private instance cannot be made here, or null when it can (root, the binaries, a `postgres` OS user). */
export function privatePostgresUnavailable(): string | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'the test is not running as root (initdb/pg_ctl run as the postgres OS user through runuser)';
  for (const bin of ['initdb', 'pg_ctl', 'postgres']) {
    if (!fs.existsSync(path.join(PG_BIN, bin))) return `${path.join(PG_BIN, bin)} is missing`;
  }
  try {
    fs.accessSync('/usr/sbin/runuser', fs.constants.X_OK);
  } catch {
    return 'runuser is missing';
  }
  return null;
}

/**
 * A PostgreSQL 15 server of the test's own: a fresh cluster in a temporary directory, on a free
 * port on 127.0.0.1 with its unix socket in that directory, owned by the `postgres` OS user. It
 * can be crashed (`pg_ctl stop -m immediate`) and started again (crash recovery) without
 * touching the shared server on 5432.
 */
export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  get logFile(): string {
    return path.join(this.dir, 'server.log');
  }

  /** Connection URL of `database` on this server (user postgres, trust). */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  static async create(): Promise<PrivatePostgres> {
    const { stdout: ids } = await run('id', ['-u', 'postgres']);
    const { stdout: gids } = await run('id', ['-g', 'postgres']);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-dbrestart-pg-'));
    fs.chownSync(dir, Number(ids.trim()), Number(gids.trim()));
    const pg = new PrivatePostgres(dir, await freePort());
    try {
      await pg.asPostgres(path.join(PG_BIN, 'initdb'), ['-D', pg.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
      await pg.start();
    } catch (err) {
      await pg.destroy();
      throw err;
    }
    return pg;
  }

  private asPostgres(bin: string, args: string[]) {
    return run('runuser', ['-u', 'postgres', '--', bin, ...args], { timeout: 120_000 });
  }

  /** Starts the server and waits until it accepts connections (after crash recovery, if any). */
  async start(): Promise<void> {
    const opts = [
      `-p ${this.port}`,
      `-c listen_addresses=127.0.0.1`,
      `-c unix_socket_directories=${this.dir}`,
      '-c max_connections=100',
      '-c shared_buffers=32MB',
      '-c logging_collector=off',
    ].join(' ');
    await this.asPostgres(path.join(PG_BIN, 'pg_ctl'), ['start', '-D', this.dataDir, '-w', '-t', '90', '-l', this.logFile, '-o', opts]);
  }

  /** A crash: every backend is killed at once, nothing is flushed or checkpointed. */
  async crash(): Promise<void> {
    await this.asPostgres(path.join(PG_BIN, 'pg_ctl'), ['stop', '-D', this.dataDir, '-m', 'immediate', '-w', '-t', '60']);
  }

  /** Creates a database on this server. */
  async createDatabase(name: string): Promise<string> {
    const client = new Client({ connectionString: this.url(), connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${name}`);
    } finally {
      await client.end();
    }
    return this.url(name);
  }

  /** The server log's last lines (for failure messages). */
  tail(lines = 30): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no server log)';
    }
  }

  /** Stops the server whatever its state and removes its directory. Never throws. */
  async destroy(): Promise<void> {
    if (fs.existsSync(path.join(this.dataDir, 'postmaster.pid'))) {
      await this.asPostgres(path.join(PG_BIN, 'pg_ctl'), ['stop', '-D', this.dataDir, '-m', 'immediate', '-w', '-t', '30']).catch(() => undefined);
    }
    // pg_ctl could not stop it (or the pid file was stale): kill the postmaster by its recorded pid.
    try {
      const pid = Number(fs.readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGKILL');
    } catch {
      /* not running */
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
