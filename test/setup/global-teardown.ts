import { clusterOfThisRun } from './global-setup';
import { stopCluster } from './postgres';

export default async function globalTeardown(): Promise<void> {
  const cluster = clusterOfThisRun.hangarTestCluster;
  if (cluster) stopCluster(cluster);
}
