import { FlowExpired } from "../flow-expired";

export const dynamic = "force-dynamic";

export default async function LoginErrorPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  return <FlowExpired code={typeof sp.code === "string" ? sp.code : "expired"} />;
}
