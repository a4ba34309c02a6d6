import * as fs from 'node:fs';
import * as path from 'node:path';
import { Controller, Get, Header, Injectable, Param, StreamableFile, UseFilters } from '@nestjs/common';
import { ApiExcludeController, OpenAPIObject } from '@nestjs/swagger';
import { AppError } from '../common/errors';
import { ApiExceptionFilter } from '../common/exception.filter';

/**
 * Holds the app's OpenAPI document. The document is scanned from the app itself, which exists only
 * after the module graph is built, so createApp hands a builder in; the first request builds it.
 */
@Injectable()
export class OpenApiDocumentHolder {
  private builder?: () => OpenAPIObject;
  private document?: OpenAPIObject;

  setBuilder(builder: () => OpenAPIObject): void {
    this.builder = builder;
    this.document = undefined;
  }

  get(): OpenAPIObject {
    if (!this.document) {
      if (!this.builder) throw new AppError('NOT_FOUND', 'no OpenAPI document in this app');
      this.document = this.builder();
    }
    return this.document;
  }
}

const BASE = '/docs/';

/** swagger-ui-dist as @nestjs/swagger depends on it (resolved from there, not assumed hoisted). */
function swaggerUiDir(): string {
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
  private readonly uiDir = swaggerUiDir();

  constructor(private readonly holder: OpenApiDocumentHolder) {}

  @Get('openapi.json')
  document(): OpenAPIObject {
    return this.holder.get();
  }

  @Get('docs')
  @Header('Content-Type', 'text/html; charset=utf-8')
  page(): string {
    return PAGE;
  }

  @Get('docs/:asset')
  asset(@Param('asset') name: string): StreamableFile {
    if (name === 'swagger-ui-init.js') return new StreamableFile(Buffer.from(INIT_JS), { type: 'application/javascript; charset=utf-8' });
    if (!Object.hasOwn(ASSETS, name)) throw new AppError('NOT_FOUND', `no route GET ${BASE}${name}`.slice(0, 200));
    const file = path.join(this.uiDir, name);
    return new StreamableFile(fs.createReadStream(file), { type: ASSETS[name], length: fs.statSync(file).size });
  }
}
