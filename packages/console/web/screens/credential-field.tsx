import { unwrap } from "../api.ts";
import { Options } from "../list/index.ts";
import { Picker, useLoad, useSession } from "../ui.tsx";

/**
 * A form's choice of one of the tenant's credentials (first 100), or none. Re-mounted once the list
 * arrives, so the stored choice is selected among real options; with `keepUnknown` a stored id not
 * among them stays a choice.
 */
export function CredentialField(props: {
  label: string;
  name: string;
  initial: string | null | undefined;
  keepUnknown?: boolean;
  hidden?: boolean;
}) {
  const { api, caps } = useSession();
  const creds = useLoad(
    () =>
      caps.surfaces.credentials
        ? unwrap(api.GET("/v1/credentials", { params: { query: { limit: 100 } } })).then((l) => l.data)
        : Promise.resolve([]),
    "creds",
  );
  const stored = props.initial ?? "";
  const unknown = props.keepUnknown && stored && !creds.data?.some((c) => c.id === stored) ? [stored] : [];
  return (
    <label hidden={props.hidden}>
      {props.label}
      <Picker name={props.name} initial={stored} key={creds.data ? "loaded" : "loading"}>
        <option value="">none</option>
        <Options
          choices={[
            ...(creds.data ?? []).map((c) => [c.id, `${c.name} (${c.kind}, …${c.hint})`] as const),
            ...unknown,
          ]}
        />
      </Picker>
    </label>
  );
}
