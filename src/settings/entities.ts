import { SettingEntity } from './setting.entity';

/** The `settings` table (the `settings` feature): SettingsStore's; the composition root adds it to the connection. */
export const SETTINGS_ENTITIES = [SettingEntity];
