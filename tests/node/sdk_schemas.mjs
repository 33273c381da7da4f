// zod schemas the SDK tests share. Every field is bounded, so that even a random model
// finishes an object within the token budget.
import { z } from 'zod';

export const Pet = z.object({
  name: z.string().max(12),
  kind: z.enum(['cat', 'dog', 'fish']),
  age: z.number().int().min(0).max(30),
  friendly: z.boolean(),
});

export const CityArgs = z.object({ city: z.string().max(12) });
