import * as fs from 'node:fs';
import * as path from 'node:path';
import { Controller, Get, Injectable, Param, StreamableFile, UseFilters } from '@nestjs/common';
import type { OpenApiDocument } from './document';
import { AppError } from '../common/errors';
import { ApiExceptionFilter } from '../common/exception.filter';
import { assertInstalled, MissingPackageError } from '../common/optional-package';
import { OPENAPI_DOCUMENT_REASON } from './document';
import { ApiExcludeController } from './swagger';

/**
 * Holds the app's OpenAPI document. The document is scanned from the app itself, which exists only
 * after the module graph is built, so createApp hands a builder in; the first request builds it.
 */
@Injectable()
export class OpenApiDocumentHolder {
  private builder?: () => OpenApiDocument;
  private document?: OpenApiDocument;

  setBuilder(builder: () => OpenApiDocument): void {
    this.builder = builder;
    this.document = undefined;
  }

  get(): OpenApiDocument {
    if (!this.document) {
      if (!this.builder) throw new AppError('NOT_FOUND', 'no OpenAPI document in this app');
      this.document = withoutSwagger404(this.builder);
    }
    return this.document;
  }
}

const BASE = '/docs/';

/**
 * Without @nestjs/swagger (an install that left it out) the document and the reference do not exist
 * here: 404, with the one line that names the package to install.
 */
function withoutSwagger404<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof MissingPackageError) throw new AppError('NOT_FOUND', err.message);
    throw err;
  }
}

/** swagger-ui-dist as @nestjs/swagger depends on it (resolved from there, not assumed hoisted). */
function swaggerUiDir(): string {
  assertInstalled('@nestjs/swagger', OPENAPI_DOCUMENT_REASON);
  const swagger = path.dirname(require.resolve('@nestjs/swagger'));
  return path.dirname(require.resolve('swagger-ui-dist/package.json', { paths: [swagger] }));
}

/** The files /docs serves, from swagger-ui-dist: nothing comes from a CDN, so it works offline. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>trendhooks API reference</title>
  <link rel="stylesheet" href="${BASE}swagger-ui.css">
  <link rel="icon" type="image/png" href="${BASE}favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="${BASE}favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${BASE}swagger-ui-bundle.js"></script>
  <script src="${BASE}swagger-ui-init.js"></script>
</body>
</html>
`;

// BaseLayout: no top bar, so the page cannot be pointed at another document.
const INIT_JS = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/** `GET /openapi.json` and the interactive reference at `GET /docs` (standalone app only). */
@ApiExcludeController()
@Controller()
@UseFilters(ApiExceptionFilter)
export class DocsController {
  /** Found at the first asset asked for, so the app starts without @nestjs/swagger installed. */
  private uiDir?: string;

  constructor(private readonly holder: OpenApiDocumentHolder) {}

  @Get('openapi.json')
  document(): OpenApiDocument {
    return this.holder.get();
  }

  @Get('docs')
  page(): StreamableFile {
    // Its type comes with the answer, not a @Header: the 404 of an install without @nestjs/swagger stays JSON.
    this.uiDir ??= withoutSwagger404(swaggerUiDir);
    return new StreamableFile(Buffer.from(PAGE), { type: 'text/html; charset=utf-8' });
  }

  @Get('docs/:asset')
  asset(@Param('asset') name: string): StreamableFile {
    if (name === 'swagger-ui-init.js') return new StreamableFile(Buffer.from(INIT_JS), { type: 'application/javascript; charset=utf-8' });
    if (!Object.hasOwn(ASSETS, name)) throw new AppError('NOT_FOUND', `no route GET ${BASE}${name}`.slice(0, 200));
    this.uiDir ??= withoutSwagger404(swaggerUiDir);
    const file = path.join(this.uiDir, name);
    return new StreamableFile(fs.createReadStream(file), { type: ASSETS[name], length: fs.statSync(file).size });
  }
}
