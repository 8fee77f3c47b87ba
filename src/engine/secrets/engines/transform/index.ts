import { alphabetRoutes } from './alphabets';
import { operationRoutes } from './operations';
import { roleRoutes } from './roles';
import { storeRoutes } from './stores';
import { templateRoutes } from './templates';
import { tokenizationKeyRoutes } from './tokenization-keys';
import { transformationRoutes } from './transformations';
import { EngineType } from '../../core/types';

/** Format-preserving encryption (FF3-1), masking and tokenization of values by role. */
export const transformEngine: EngineType = {
  type: 'transform',
  kind: 'secret',
  description: 'format-preserving encryption, masking and tokenization',
  routes: [
    ...roleRoutes,
    ...transformationRoutes,
    ...templateRoutes,
    ...alphabetRoutes,
    ...storeRoutes,
    ...tokenizationKeyRoutes,
    ...operationRoutes,
  ],
};
