/** The `demo` key: what `npm start` runs besides the gateway. */
import { z } from 'zod';
import { hostName, port } from './values.js';

/**
 * The demo of `npm start` (config/gateway.yaml): a built-in echo upstream on
 * this address. Nothing of it runs unless a config has this key.
 */
export const demo = z
  .strictObject({
    echoUpstream: z
      .strictObject({
        host: hostName().default('127.0.0.1').describe('address of the echo upstream'),
        port: port().describe('port of the echo upstream'),
      })
      .describe('`serve` also starts a built-in echo upstream there'),
  })
  .meta({
    description: 'The `npm start` demo (`config/gateway.yaml`). Omitted: nothing of the demo runs.',
    examples: [{ echoUpstream: { host: '127.0.0.1', port: 9001 } }],
  })
  .optional();
