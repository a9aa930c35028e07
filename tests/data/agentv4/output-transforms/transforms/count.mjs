// The answer as JSON: its words counted, the text kept
export function asJson(output) {
  const words = output.split(/\s+/).filter(Boolean);
  return { words: words.length, text: output };
}
