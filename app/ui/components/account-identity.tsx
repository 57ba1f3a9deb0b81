type Person = { username: string; givenName: string | null; familyName: string | null };

/** A signed-in account as the chooser and the logout page show it: initial, full name, login name. */
export function AccountIdentity({ user, primaryDomain }: { user: Person; primaryDomain: string }) {
  const name = [user.givenName, user.familyName].filter(Boolean).join(" ") || user.username;
  return (
    <>
      <span className="avatar" aria-hidden="true">
        {name.slice(0, 1).toUpperCase()}
      </span>
      <span className="account-text">
        <span className="account-name">{name}</span>
        <span className="account-login">
          {user.username}@{primaryDomain}
        </span>
      </span>
    </>
  );
}
