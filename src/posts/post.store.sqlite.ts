import { Injectable } from '@nestjs/common';
import { TypeOrmPostStore } from './post.store.typeorm';

@Injectable()
export class SqlitePostStore extends TypeOrmPostStore {
  protected placeholder(): string {
    return '?';
  }
}
