// Paths of the committed chart for integration tests (the CLI tests import chartDir too).
import * as path from 'path';

export const repoRoot = path.resolve(__dirname, '..', '..');
export const chartDir = path.join(repoRoot, 'charts', 'nebari-llm-serving');
