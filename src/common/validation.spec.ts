import { IsBoolean, IsDefined, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { BodyValidationPipe } from './validation';

/** Rules in the order the create-webhook body writes them: presence, type, then content. */
class Body {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @MaxLength(5, { message: 'name must be at most 5 characters' })
  @Matches(/^[a-z]+$/, { message: 'name must be lower-case letters' })
  name: string;

  @IsOptional()
  @IsBoolean({ message: 'flag must be a boolean' })
  flag?: boolean;
}

describe('BodyValidationPipe', () => {
  const pipe = new BodyValidationPipe(Body);
  const check = (value: unknown) => pipe.transform(value, { type: 'body' });

  it.each([
    ['a number', 123],
    ['true', true],
  ])('answers a value of the wrong type (%s) with the type rule, not a content rule it also breaks', async (_what, name) => {
    await expect(check({ name })).rejects.toThrow(/^name must be a string$/);
  });

  it('answers a missing field with "required"', async () => {
    await expect(check({})).rejects.toThrow(/^name is required$/);
    await expect(check({ name: null })).rejects.toThrow(/^name is required$/);
  });

  it('answers a value of the right type by the content rule it breaks', async () => {
    await expect(check({ name: 'abcdefg' })).rejects.toThrow(/^name must be at most 5 characters$/);
    await expect(check({ name: 'AB' })).rejects.toThrow(/^name must be lower-case letters$/);
    await expect(check({ name: 'ab', flag: 'yes' })).rejects.toThrow(/^flag must be a boolean$/);
  });

  it('passes a valid body through', async () => {
    await expect(check({ name: 'ab', flag: true })).resolves.toMatchObject({ name: 'ab', flag: true });
  });
});
