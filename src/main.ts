import 'reflect-metadata';
import { serve } from './app';
import { ConfigError, loadConfig } from './config/config';

serve(loadConfig(process.env)).catch((err) => {
  console.error(err instanceof ConfigError ? `configuration error: ${err.message}` : err);
  process.exit(1);
});
