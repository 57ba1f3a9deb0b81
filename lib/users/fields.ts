import { z } from "zod";
import { codedPattern } from "@/lib/problem";

/**
 * The rules for a user's fields, shared by the management API and self-registration so that a
 * name one of them accepts is never one the other calls invalid.
 */

/** Letters and digits of any script and . _ @ + -, so a username never needs quoting in a login name. */
export const username = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(codedPattern(/^[\p{L}\p{N}._@+-]+$/u, "username_characters"), "Only letters, digits and . _ @ + - are allowed.");

/**
 * Self-registration is stricter on length than an administrator: a one-character name is almost
 * always a slip, and the sign-up page promises 2 to 64 characters (login.errors.usernameInvalid).
 */
export const registeredUsername = username.min(2).max(64);

export const email = z.email().max(320);

/** Given and family names. */
export const personName = z.string().trim().max(200);

/** Login name as introspection and the UI show it: username@primarydomain. */
export function loginNameOf(user: { username: string }, primaryDomain: string): string {
  return `${user.username}@${primaryDomain}`;
}
