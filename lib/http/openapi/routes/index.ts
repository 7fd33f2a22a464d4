/** Every documented route. A new route file under app/api gets its entry in one of these lists. */
import type { ApiRoute } from '../registry';
import { consoleRoutes } from './console';
import { jobRoutes } from './jobs';
import { operationRoutes } from './operations';
import { queueRoutes } from './queues';
import { accessRoutes } from './access';
import { viewRoutes } from './views';

export const apiRoutes: readonly ApiRoute[] = [...jobRoutes, ...consoleRoutes, ...operationRoutes, ...queueRoutes, ...accessRoutes, ...viewRoutes];
