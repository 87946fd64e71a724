class Flaky {
  id() { return 'flaky'; }
  async callApi(prompt) {
    if (prompt.includes('boom')) return { error: 'planted provider error' };
    return { output: prompt, tokenUsage: { total: 5, prompt: 3, completion: 2 } };
  }
}
module.exports = Flaky;
