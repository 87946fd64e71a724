// An offline provider: answers with the prompt itself (an error for "boom"), fixed token counts.
class Fixed {
  id() { return 'fixed'; }
  async callApi(prompt) {
    if (prompt.includes('boom')) return { error: 'planted provider error' };
    return { output: prompt, tokenUsage: { total: 7, prompt: 4, completion: 3 } };
  }
}
module.exports = Fixed;
