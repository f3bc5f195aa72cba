/** Every console page, in navigation order. A new page: its file under pages/, and one line here. */
import type { PlanCatalogue } from '../../plans/catalogue.ts';
import type { ConsolePage } from '../layout.ts';
import { accountPage } from './account.ts';
import { billingPage } from './billing.ts';
import { appEventsPage } from './app-events.ts';
import { appInvitesPage } from './app-invites.ts';
import { appReleasesPage } from './app-releases.ts';
import { appResourcesPage } from './app-resources.ts';
import { appSecretsPage } from './app-secrets.ts';
import { appDomainsPage } from './app-domains.ts';
import { appDataPage } from './app-data.ts';
import { appFilesPage } from './app-files.ts';
import { appStoragePage } from './app-storage.ts';
import { appAnalyticsPage } from './app-analytics.ts';
import { appsPage } from './apps.ts';
import { confirmPage } from './confirm.ts';
import { devicePage } from './device.ts';
import { keysPage } from './keys.ts';
import { membersPage } from './members.ts';
import { operatorPage } from './operator.ts';
import { operatorAccountPage } from './operator-account.ts';
import { operatorActionsPage } from './operator-actions.ts';
import { operatorHealthPage } from './operator-health.ts';
import { operatorBackupsPage } from './operator-backups.ts';
import { signInPage } from './sign-in.ts';
import { signupPage } from './signup.ts';

export function consolePageList(options: {
  devOutbox: boolean;
  plans: PlanCatalogue;
}): ConsolePage[] {
  return [
    appsPage,
    keysPage,
    membersPage,
    accountPage(options.plans),
    billingPage(options.plans),
    operatorPage,
    operatorAccountPage,
    operatorHealthPage,
    operatorBackupsPage,
    operatorActionsPage,
    appReleasesPage,
    appResourcesPage,
    appDataPage,
    appFilesPage,
    appStoragePage,
    appSecretsPage,
    appDomainsPage,
    appAnalyticsPage,
    appEventsPage,
    appInvitesPage,
    signInPage(options.devOutbox),
    confirmPage,
    signupPage,
    devicePage,
  ];
}
