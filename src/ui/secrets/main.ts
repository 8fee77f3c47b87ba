import { secretsConsole } from './console';
import { startConsole } from '../shared/app';

startConsole(secretsConsole);
