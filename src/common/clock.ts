import { Inject, Injectable } from '@nestjs/common';

/** Injection token for the clock, so services and tests can agree on "now" without patching Date. */
export const CLOCK = Symbol('trendhooks:clock');

export interface Clock {
  now(): Date;
}

@Injectable()
export class SystemClock implements Clock {
  now(): Date {
    return new Date();
  }
}

/** `@InjectClock() clock: Clock`: the one clock TrendhooksModule provides. */
export const InjectClock = (): ParameterDecorator & PropertyDecorator => Inject(CLOCK);
