"use client";

import { usePathname } from "next/navigation";

/** A sidebar link marked as the current page (aria-current) for the section it belongs to. */
export function NavLink({ href, children, exact = false }: { href: string; children: React.ReactNode; exact?: boolean }) {
  const path = usePathname();
  const current = exact ? path === href : path === href || path.startsWith(href + "/");
  return (
    <a href={href} className="nav-link" aria-current={current ? "page" : undefined}>
      {children}
    </a>
  );
}
