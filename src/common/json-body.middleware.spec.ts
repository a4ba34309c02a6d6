import { Controller, Delete, Get, Post } from '@nestjs/common';
import { routeMatchers } from './json-body.middleware';

@Controller('v1/things')
class ThingsController {
  @Post()
  create() {}

  @Get(':id')
  get() {}

  @Delete(':id')
  remove() {}

  @Post(':id/rotate')
  rotate() {}

  notARoute() {}
}

const hit = (method: string, url: string) =>
  routeMatchers([ThingsController]).some((m) => (m.method === 'ALL' || m.method === method) && m.path.test(url.split('?')[0]));

describe('routeMatchers (the routes whose bodies we read ahead of the host’s parser)', () => {
  it('lists one matcher per route handler, with its method', () => {
    expect(routeMatchers([ThingsController]).map((m) => m.method)).toEqual(['POST', 'GET', 'DELETE', 'POST']);
  });

  it('matches our routes, behind any global prefix, with a trailing slash or a query, any case', () => {
    expect(hit('POST', '/v1/things')).toBe(true);
    expect(hit('POST', '/api/v1/things/')).toBe(true);
    expect(hit('POST', '/V1/Things?x=1')).toBe(true);
    expect(hit('POST', '/v1/things/01ARZ3NDEKTSV4RRFFQ69G5FAV/rotate')).toBe(true);
    expect(hit('DELETE', '/v1/things/abc')).toBe(true);
  });

  it('leaves every other route alone: other methods, other paths, longer paths, lookalikes', () => {
    expect(hit('PUT', '/v1/things')).toBe(false);
    expect(hit('POST', '/v1/things/abc')).toBe(false);
    expect(hit('POST', '/v1/thingsx')).toBe(false);
    expect(hit('POST', '/v1/things/abc/rotate/more')).toBe(false);
    expect(hit('POST', '/host/echo')).toBe(false);
    expect(hit('POST', '/v1/things.json')).toBe(false);
  });
});

