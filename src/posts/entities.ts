import { PostEntity } from './post.entity';

/** The tables PostsModule reads and writes; the composition root adds them to the connection. */
export const POST_ENTITIES = [PostEntity];
