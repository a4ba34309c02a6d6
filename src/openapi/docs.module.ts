import { Module } from '@nestjs/common';
import { DocsController, OpenApiDocumentHolder } from './docs.controller';

/** Serves the OpenAPI document and its reference page; the standalone app wires the document in. */
@Module({
  controllers: [DocsController],
  providers: [OpenApiDocumentHolder],
  exports: [OpenApiDocumentHolder],
})
export class DocsModule {}
