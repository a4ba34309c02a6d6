/**
 * Packages that only some set-ups use: `pg` (a PostgreSQL database), `ioredis` (REDIS_URL),
 * `@nestjs/platform-fastify` (HTTP_ADAPTER=fastify) and `@nestjs/swagger` (the OpenAPI document and
 * /docs). They are required where they are used, never at module load, so a host on SQLite and
 * express runs without them installed (test/optional-packages.e2e-spec.ts). When one is asked for
 * but missing, the error is one line: what asked for it, and the package to install.
 */
export class MissingPackageError extends Error {
  constructor(
    readonly packageName: string,
    reason: string,
  ) {
    super(`${reason} but the "${packageName}" package is not installed: npm install ${packageName}`);
    this.name = 'MissingPackageError';
  }
}

/** Node's (and jest's) error for `name` itself not being found, not for a file that `name` requires in turn. */
function isMissing(err: unknown, name: string): boolean {
  const e = err as NodeJS.ErrnoException | undefined;
  return e?.code === 'MODULE_NOT_FOUND' && typeof e.message === 'string' && e.message.split('\n')[0].includes(`'${name}'`);
}

/** `require(name)`, or a MissingPackageError saying `${reason} but the "name" package is not installed: …`. */
export function requireOptional<T>(name: string, reason: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(name) as T;
  } catch (err) {
    if (isMissing(err, name)) throw new MissingPackageError(name, reason);
    throw err;
  }
}

/** Whether `name` can be required from here, without loading it. */
export function isInstalled(name: string): boolean {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** Throws requireOptional's error when `name` cannot be required, without loading it (a library that loads it itself comes later). */
export function assertInstalled(name: string, reason: string): void {
  if (!isInstalled(name)) throw new MissingPackageError(name, reason);
}
