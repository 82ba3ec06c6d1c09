// Where Select Model saves the model folder: the settings scope the value in effect comes from, so that the user's
// own later edits there still take effect (and a Workspace value never silently overrides what was just picked).
// vscode-free: the command maps the answer to a ConfigurationTarget.

/** What `WorkspaceConfiguration.inspect` says of a setting (only the fields read here). */
export interface SettingLayers {
  globalValue?: unknown;
  workspaceValue?: unknown;
}

/** The settings are read without a resource (settings.ts), so a folder's own value never applies: two scopes. */
export type SettingScope = 'user' | 'workspace';

/**
 * The scope that decides the value now: the workspace's value beats the user's. With none
 * set, the user scope; in a remote window VS Code then writes a machine-overridable setting to the Remote
 * settings (they override User), so the notification says so and offers to open them.
 */
export function modelSettingTarget(
  layers: SettingLayers | undefined,
  remoteName: string | undefined,
): { scope: SettingScope; where: string } {
  if (layers?.workspaceValue !== undefined) return { scope: 'workspace', where: 'the Workspace settings' };
  return {
    scope: 'user',
    where:
      remoteName !== undefined ? `the Remote [${remoteName}] settings, which override User settings in this window` : 'the User settings',
  };
}
