/* eslint-disable */
import * as types from './graphql';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  subscription ConsoleLive($filter: LedgerFilter, $after: String) {\n    ledgerEvents(filter: $filter, after: $after) {\n      id\n      cursor\n      position\n      occurredAt\n      kind\n      direction\n      toolName\n      status\n      session\n      task\n      actionId\n    }\n  }\n": typeof types.ConsoleLiveDocument,
    "\n  query ConsoleSignIn {\n    directoryStats {\n      rows\n    }\n  }\n": typeof types.ConsoleSignInDocument,
    "\n  query ConsoleAction($id: ID!) {\n    action(id: $id) {\n      id\n      toolName\n      outcome\n      status\n      startedAt\n      endedAt\n      events {\n        id\n        position\n        occurredAt\n        kind\n        direction\n        status\n        method\n        url\n        task\n        session\n        model\n        inputTokens\n        outputTokens\n        costUsd\n        metadata\n        redactedSecrets\n        payloadState\n        payloadSha256\n        payloadSize\n        contract {\n          form\n          sha256\n        }\n        matchesContract {\n          matches\n          differences {\n            part\n            expected\n            recorded\n          }\n        }\n        payload {\n          base64\n          text\n        }\n      }\n    }\n  }\n": typeof types.ConsoleActionDocument,
    "\n  subscription ConsoleStream($actionId: ID!) {\n    streamCapture(actionId: $actionId) {\n      sequence\n      offset\n      size\n      base64\n      final\n      state\n      sha256\n      totalSize\n      cut\n    }\n  }\n": typeof types.ConsoleStreamDocument,
    "\n  query ConsoleCounts($by: LedgerGrouping!) {\n    ledgerCounts(by: $by) {\n      key\n      events\n      inputTokens\n      outputTokens\n      costUsd\n    }\n  }\n": typeof types.ConsoleCountsDocument,
    "\n  query ConsoleAsk($question: String!) {\n    ask(question: $question) {\n      readAs\n      answer\n      notUnderstood\n      counts {\n        key\n        events\n        inputTokens\n        outputTokens\n        costUsd\n      }\n      total {\n        key\n        events\n        inputTokens\n        outputTokens\n        costUsd\n      }\n      events(first: 20, order: DESC) {\n        edges {\n          node {\n            id\n            actionId\n            kind\n            toolName\n            status\n          }\n        }\n      }\n    }\n  }\n": typeof types.ConsoleAskDocument,
    "\n  query ConsoleVerify {\n    verifyLedger(limit: 50) {\n      ok\n      batches\n      events\n      problemCount\n      genesisPosition\n      headSeq\n      headLink\n      lastPosition\n      problems {\n        kind\n        message\n        position\n        batchId\n        eventId\n        columns\n      }\n    }\n  }\n": typeof types.ConsoleVerifyDocument,
    "\n  query ConsoleResolve($query: String!) {\n    resolve(query: $query, limit: 20) {\n      query\n      message\n      readAs\n      corrections {\n        from\n        to\n      }\n      matches {\n        score\n        layer\n        reason\n        row {\n          __typename\n          name\n          type\n          description\n        }\n      }\n    }\n  }\n": typeof types.ConsoleResolveDocument,
    "\n  query ConsoleTask($id: ID!) {\n    task(id: $id) {\n      id\n      calls(first: 200) {\n        edges {\n          node {\n            id\n            toolName\n            outcome\n            status\n            startedAt\n          }\n        }\n      }\n      refusals(first: 200) {\n        edges {\n          node {\n            id\n            actionId\n            occurredAt\n            toolName\n            status\n            metadata\n          }\n        }\n      }\n    }\n  }\n": typeof types.ConsoleTaskDocument,
    "\n  query ConsoleInspectToken($token: String!) {\n    inspectToken(token: $token) {\n      valid\n      revoked\n      tokenId\n      caveats\n      limits\n      issuedBy\n      uses {\n        caveat\n        max\n        used\n      }\n      revocation {\n        tokenId\n        reason\n        revokedAt\n        revokedBy\n      }\n    }\n  }\n": typeof types.ConsoleInspectTokenDocument,
    "\n  mutation ConsoleIssueToken($input: IssueTokenInput!) {\n    issueToken(input: $input) {\n      token\n      tokenId\n      caveats\n      limits\n    }\n  }\n": typeof types.ConsoleIssueTokenDocument,
    "\n  query ConsoleTool($name: String!, $args: JSON) {\n    tool(name: $name) {\n      name\n      description\n      kind\n      runnable\n      reasons\n      secretNames\n      unboundSecrets\n      argsSchema\n      section {\n        type\n        versionTag\n        builtAt\n      }\n      contracts(args: $args) {\n        form\n        door\n        shape\n        text\n        json\n        sha256\n        secretNames\n        parts {\n          sentTo\n          credentialPlace\n          credential\n          wrapping\n        }\n      }\n    }\n    events(filter: { tool: [$name] }, order: DESC, first: 20) {\n      edges {\n        node {\n          id\n          actionId\n          kind\n          direction\n          status\n          occurredAt\n          contract {\n            form\n            sha256\n          }\n        }\n      }\n    }\n  }\n": typeof types.ConsoleToolDocument,
    "\n  mutation ConsoleDispatch($tool: String!, $args: JSON) {\n    dispatch(tool: $tool, args: $args, form: DISPATCH) {\n      actionId\n      outcome\n      status\n      outputText\n      error {\n        code\n        message\n      }\n    }\n  }\n": typeof types.ConsoleDispatchDocument,
};
const documents: Documents = {
    "\n  subscription ConsoleLive($filter: LedgerFilter, $after: String) {\n    ledgerEvents(filter: $filter, after: $after) {\n      id\n      cursor\n      position\n      occurredAt\n      kind\n      direction\n      toolName\n      status\n      session\n      task\n      actionId\n    }\n  }\n": types.ConsoleLiveDocument,
    "\n  query ConsoleSignIn {\n    directoryStats {\n      rows\n    }\n  }\n": types.ConsoleSignInDocument,
    "\n  query ConsoleAction($id: ID!) {\n    action(id: $id) {\n      id\n      toolName\n      outcome\n      status\n      startedAt\n      endedAt\n      events {\n        id\n        position\n        occurredAt\n        kind\n        direction\n        status\n        method\n        url\n        task\n        session\n        model\n        inputTokens\n        outputTokens\n        costUsd\n        metadata\n        redactedSecrets\n        payloadState\n        payloadSha256\n        payloadSize\n        contract {\n          form\n          sha256\n        }\n        matchesContract {\n          matches\n          differences {\n            part\n            expected\n            recorded\n          }\n        }\n        payload {\n          base64\n          text\n        }\n      }\n    }\n  }\n": types.ConsoleActionDocument,
    "\n  subscription ConsoleStream($actionId: ID!) {\n    streamCapture(actionId: $actionId) {\n      sequence\n      offset\n      size\n      base64\n      final\n      state\n      sha256\n      totalSize\n      cut\n    }\n  }\n": types.ConsoleStreamDocument,
    "\n  query ConsoleCounts($by: LedgerGrouping!) {\n    ledgerCounts(by: $by) {\n      key\n      events\n      inputTokens\n      outputTokens\n      costUsd\n    }\n  }\n": types.ConsoleCountsDocument,
    "\n  query ConsoleAsk($question: String!) {\n    ask(question: $question) {\n      readAs\n      answer\n      notUnderstood\n      counts {\n        key\n        events\n        inputTokens\n        outputTokens\n        costUsd\n      }\n      total {\n        key\n        events\n        inputTokens\n        outputTokens\n        costUsd\n      }\n      events(first: 20, order: DESC) {\n        edges {\n          node {\n            id\n            actionId\n            kind\n            toolName\n            status\n          }\n        }\n      }\n    }\n  }\n": types.ConsoleAskDocument,
    "\n  query ConsoleVerify {\n    verifyLedger(limit: 50) {\n      ok\n      batches\n      events\n      problemCount\n      genesisPosition\n      headSeq\n      headLink\n      lastPosition\n      problems {\n        kind\n        message\n        position\n        batchId\n        eventId\n        columns\n      }\n    }\n  }\n": types.ConsoleVerifyDocument,
    "\n  query ConsoleResolve($query: String!) {\n    resolve(query: $query, limit: 20) {\n      query\n      message\n      readAs\n      corrections {\n        from\n        to\n      }\n      matches {\n        score\n        layer\n        reason\n        row {\n          __typename\n          name\n          type\n          description\n        }\n      }\n    }\n  }\n": types.ConsoleResolveDocument,
    "\n  query ConsoleTask($id: ID!) {\n    task(id: $id) {\n      id\n      calls(first: 200) {\n        edges {\n          node {\n            id\n            toolName\n            outcome\n            status\n            startedAt\n          }\n        }\n      }\n      refusals(first: 200) {\n        edges {\n          node {\n            id\n            actionId\n            occurredAt\n            toolName\n            status\n            metadata\n          }\n        }\n      }\n    }\n  }\n": types.ConsoleTaskDocument,
    "\n  query ConsoleInspectToken($token: String!) {\n    inspectToken(token: $token) {\n      valid\n      revoked\n      tokenId\n      caveats\n      limits\n      issuedBy\n      uses {\n        caveat\n        max\n        used\n      }\n      revocation {\n        tokenId\n        reason\n        revokedAt\n        revokedBy\n      }\n    }\n  }\n": types.ConsoleInspectTokenDocument,
    "\n  mutation ConsoleIssueToken($input: IssueTokenInput!) {\n    issueToken(input: $input) {\n      token\n      tokenId\n      caveats\n      limits\n    }\n  }\n": types.ConsoleIssueTokenDocument,
    "\n  query ConsoleTool($name: String!, $args: JSON) {\n    tool(name: $name) {\n      name\n      description\n      kind\n      runnable\n      reasons\n      secretNames\n      unboundSecrets\n      argsSchema\n      section {\n        type\n        versionTag\n        builtAt\n      }\n      contracts(args: $args) {\n        form\n        door\n        shape\n        text\n        json\n        sha256\n        secretNames\n        parts {\n          sentTo\n          credentialPlace\n          credential\n          wrapping\n        }\n      }\n    }\n    events(filter: { tool: [$name] }, order: DESC, first: 20) {\n      edges {\n        node {\n          id\n          actionId\n          kind\n          direction\n          status\n          occurredAt\n          contract {\n            form\n            sha256\n          }\n        }\n      }\n    }\n  }\n": types.ConsoleToolDocument,
    "\n  mutation ConsoleDispatch($tool: String!, $args: JSON) {\n    dispatch(tool: $tool, args: $args, form: DISPATCH) {\n      actionId\n      outcome\n      status\n      outputText\n      error {\n        code\n        message\n      }\n    }\n  }\n": types.ConsoleDispatchDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ConsoleLive($filter: LedgerFilter, $after: String) {\n    ledgerEvents(filter: $filter, after: $after) {\n      id\n      cursor\n      position\n      occurredAt\n      kind\n      direction\n      toolName\n      status\n      session\n      task\n      actionId\n    }\n  }\n"): typeof import('./graphql').ConsoleLiveDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleSignIn {\n    directoryStats {\n      rows\n    }\n  }\n"): typeof import('./graphql').ConsoleSignInDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleAction($id: ID!) {\n    action(id: $id) {\n      id\n      toolName\n      outcome\n      status\n      startedAt\n      endedAt\n      events {\n        id\n        position\n        occurredAt\n        kind\n        direction\n        status\n        method\n        url\n        task\n        session\n        model\n        inputTokens\n        outputTokens\n        costUsd\n        metadata\n        redactedSecrets\n        payloadState\n        payloadSha256\n        payloadSize\n        contract {\n          form\n          sha256\n        }\n        matchesContract {\n          matches\n          differences {\n            part\n            expected\n            recorded\n          }\n        }\n        payload {\n          base64\n          text\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ConsoleActionDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ConsoleStream($actionId: ID!) {\n    streamCapture(actionId: $actionId) {\n      sequence\n      offset\n      size\n      base64\n      final\n      state\n      sha256\n      totalSize\n      cut\n    }\n  }\n"): typeof import('./graphql').ConsoleStreamDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleCounts($by: LedgerGrouping!) {\n    ledgerCounts(by: $by) {\n      key\n      events\n      inputTokens\n      outputTokens\n      costUsd\n    }\n  }\n"): typeof import('./graphql').ConsoleCountsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleAsk($question: String!) {\n    ask(question: $question) {\n      readAs\n      answer\n      notUnderstood\n      counts {\n        key\n        events\n        inputTokens\n        outputTokens\n        costUsd\n      }\n      total {\n        key\n        events\n        inputTokens\n        outputTokens\n        costUsd\n      }\n      events(first: 20, order: DESC) {\n        edges {\n          node {\n            id\n            actionId\n            kind\n            toolName\n            status\n          }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ConsoleAskDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleVerify {\n    verifyLedger(limit: 50) {\n      ok\n      batches\n      events\n      problemCount\n      genesisPosition\n      headSeq\n      headLink\n      lastPosition\n      problems {\n        kind\n        message\n        position\n        batchId\n        eventId\n        columns\n      }\n    }\n  }\n"): typeof import('./graphql').ConsoleVerifyDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleResolve($query: String!) {\n    resolve(query: $query, limit: 20) {\n      query\n      message\n      readAs\n      corrections {\n        from\n        to\n      }\n      matches {\n        score\n        layer\n        reason\n        row {\n          __typename\n          name\n          type\n          description\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ConsoleResolveDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleTask($id: ID!) {\n    task(id: $id) {\n      id\n      calls(first: 200) {\n        edges {\n          node {\n            id\n            toolName\n            outcome\n            status\n            startedAt\n          }\n        }\n      }\n      refusals(first: 200) {\n        edges {\n          node {\n            id\n            actionId\n            occurredAt\n            toolName\n            status\n            metadata\n          }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ConsoleTaskDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleInspectToken($token: String!) {\n    inspectToken(token: $token) {\n      valid\n      revoked\n      tokenId\n      caveats\n      limits\n      issuedBy\n      uses {\n        caveat\n        max\n        used\n      }\n      revocation {\n        tokenId\n        reason\n        revokedAt\n        revokedBy\n      }\n    }\n  }\n"): typeof import('./graphql').ConsoleInspectTokenDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleIssueToken($input: IssueTokenInput!) {\n    issueToken(input: $input) {\n      token\n      tokenId\n      caveats\n      limits\n    }\n  }\n"): typeof import('./graphql').ConsoleIssueTokenDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleTool($name: String!, $args: JSON) {\n    tool(name: $name) {\n      name\n      description\n      kind\n      runnable\n      reasons\n      secretNames\n      unboundSecrets\n      argsSchema\n      section {\n        type\n        versionTag\n        builtAt\n      }\n      contracts(args: $args) {\n        form\n        door\n        shape\n        text\n        json\n        sha256\n        secretNames\n        parts {\n          sentTo\n          credentialPlace\n          credential\n          wrapping\n        }\n      }\n    }\n    events(filter: { tool: [$name] }, order: DESC, first: 20) {\n      edges {\n        node {\n          id\n          actionId\n          kind\n          direction\n          status\n          occurredAt\n          contract {\n            form\n            sha256\n          }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ConsoleToolDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleDispatch($tool: String!, $args: JSON) {\n    dispatch(tool: $tool, args: $args, form: DISPATCH) {\n      actionId\n      outcome\n      status\n      outputText\n      error {\n        code\n        message\n      }\n    }\n  }\n"): typeof import('./graphql').ConsoleDispatchDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
