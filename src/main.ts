import 'reflect-metadata';
import { main } from './cli';

// `npm start` is `trendhooks serve`: the same one-line errors, the same exit codes.
main(['serve', ...process.argv.slice(2)]);
