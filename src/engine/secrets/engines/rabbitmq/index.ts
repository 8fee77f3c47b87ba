import { configRoutes } from './config';
import { credsRoutes, revokeCreds } from './creds';
import { roleRoutes } from './roles';
import { EngineType } from '../../core/types';

/** Dynamic message broker credentials (`rabbitmq` by default): users created on a RabbitMQ on demand. */
export const rabbitmqEngine: EngineType = {
  type: 'rabbitmq',
  kind: 'secret',
  description: 'dynamic message broker credentials',
  routes: [...configRoutes, ...roleRoutes, ...credsRoutes],
  revoke: revokeCreds,
};
