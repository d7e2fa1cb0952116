/** Every HTTP route, registered in one place. */
import type { App, AppContext } from '../context.js';
import { registerHealth } from './health.js';

export function registerRoutes(app: App, ctx: AppContext): void {
  registerHealth(app, ctx);
}
