import { Injectable } from '@nestjs/common';
import { TypeOrmPostStore } from './post.store.typeorm';

@Injectable()
export class PostgresPostStore extends TypeOrmPostStore {
  protected placeholder(i: number): string {
    return `$${i + 1}`;
  }
}
