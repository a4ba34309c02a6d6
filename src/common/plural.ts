/** `1 delivery`, `2 deliveries`: counts in messages read as English. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
