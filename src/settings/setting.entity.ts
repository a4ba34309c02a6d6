import { Entity, PrimaryColumn, Column } from 'typeorm';

/** Small key/value store for values the embedded default generates once and keeps (e.g. the cursor key). */
@Entity('settings')
export class SettingEntity {
  @PrimaryColumn({ type: 'varchar', length: 100 })
  key: string;

  @Column({ type: 'text' })
  value: string;
}
