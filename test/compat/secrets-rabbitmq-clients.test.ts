import { describeOfficialClients, haveGo, secretsTarget } from '../helpers/compat';
import { haveRabbit, startRabbit } from '../helpers/rabbitmq';

/**
 * The official clients, unchanged, against the message broker engine: the Go client
 * (test/compat/vault-go/rabbitmq) and hvac (test/compat/python/test_vault_rabbitmq.py), each with
 * its own mount on one Hangar and one private RabbitMQ.
 */
describeOfficialClients('rabbitmq engine with the official clients', async () => {
  const [rabbit, hangar] = await Promise.all([startRabbit(), secretsTarget()]);
  return {
    env: {
      ...hangar.env,
      RABBITMQ_MGMT_URL: rabbit.managementUrl,
      RABBITMQ_ADMIN_USER: rabbit.username,
      RABBITMQ_ADMIN_PASSWORD: rabbit.password,
    },
    async close() {
      await hangar.close();
      await rabbit.stop();
    },
  };
}, {
  runnable: haveRabbit() && haveGo(),
  goPackages: ['./rabbitmq/...'],
  pythonFiles: ['test_vault_rabbitmq.py'],
});
