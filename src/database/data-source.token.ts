import { Inject } from '@nestjs/common';

/**
 * The TypeORM DataSource every trendhooks store works on: the host's connection chosen by
 * `TrendhooksModule.forRoot({ dataSource })` (the default connection when omitted).
 */
export const TRENDHOOKS_DATA_SOURCE = Symbol('trendhooks:data-source');

/** `@InjectTrendhooksDataSource() ds: DataSource`: the connection trendhooks was configured with. */
export const InjectTrendhooksDataSource = (): ParameterDecorator & PropertyDecorator => Inject(TRENDHOOKS_DATA_SOURCE);
