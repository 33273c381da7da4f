// Random JSON schemas for the structured-output tests: string / integer / number / boolean /
// enum / array / date leaves, nested objects, random required subsets.
// Every value is bounded (string lengths, item counts), so each output completes within
// max_tokens; an unbounded string could run on past it.
function randomLeaf(rng) {
  const kinds = [
    () => ({ type: 'string', maxLength: 1 + Math.floor(rng() * 10) }),
    () => ({ type: 'string', minLength: 1, maxLength: 6 }),
    () => ({ type: 'integer' }),
    () => ({ type: 'integer', minimum: -5, maximum: 5 + Math.floor(rng() * 1000) }),
    () => ({ type: 'number' }),
    () => ({ type: 'number', minimum: 0 }),
    () => ({ type: 'boolean' }),
    () => ({ enum: ['red', 'green', 'blue', 'a "quoted" one'].slice(0, 2 + Math.floor(rng() * 3)) }),
    () => ({ type: 'array', items: { type: 'integer', minimum: 0, maximum: 99 }, maxItems: 1 + Math.floor(rng() * 3) }),
    () => ({ type: 'array', items: { type: 'string', maxLength: 4 }, minItems: 1, maxItems: 2 }),
    () => ({ type: 'string', format: 'date' }),
  ];
  return kinds[Math.floor(rng() * kinds.length)]();
}

function randomObject(rng, depth) {
  const properties = {};
  const numProperties = 1 + Math.floor(rng() * (depth === 0 ? 6 : 3));
  for (let i = 0; i < numProperties; ++i) {
    const nested = depth < 2 && rng() < 0.2;
    properties[`p${i}_${Math.floor(rng() * 100)}`] = nested ? randomObject(rng, depth + 1) : randomLeaf(rng);
  }
  const required = Object.keys(properties).filter(() => rng() < 0.6);
  return { type: 'object', properties, required, additionalProperties: false };
}

export function randomSchema(rng) {
  return randomObject(rng, 0);
}
