// Command server is the MCP server of the mcptools tests, written with the
// official Go SDK: over stdio, or streamable HTTP with -http ADDR (it
// prints its URL). Tools: add (a+b), slow (waits until cancelled), write,
// ask (a form question to the user), survey (a typed form with
// defaults), visit (a url-mode question), count
// (progress), grow (adds a tool: tools/list_changed), roots (the
// client's roots), summarise (asks the client's model: sampling), crash
// (the process exits). -hang-start makes it never answer initialize;
// -fail-start MSG prints MSG on stderr and exits 1.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type addIn struct {
	A int `json:"a" jsonschema:"the first number"`
	B int `json:"b" jsonschema:"the second number"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type askIn struct {
	Question string `json:"question"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

type writeIn struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	hang := flag.Bool("hang-start", false, "never answer initialize")
	fail := flag.String("fail-start", "", "print this on stderr and exit 1 at once")
	oauth := flag.Bool("oauth", false, "with -http: serve only holders of a token from its own authorization server")
	expiresIn := flag.Duration("expires-in", time.Hour, "with -oauth: how long an access token lasts")
	clientID := flag.String("client-id", "", "with -oauth: a client registered beforehand")
	gate := flag.String("start-gate", "", "answer nothing until this file exists")
	version := flag.String("protocol", "", "serve only this MCP revision (2026-07-28, 2025-11-25, ...); empty: every one the SDK has")
	flag.Parse()
	if *fail != "" {
		fmt.Fprintln(os.Stderr, "starting the test server")
		fmt.Fprintln(os.Stderr, *fail)
		os.Exit(1)
	}
	if *hang {
		time.Sleep(time.Hour)
		return
	}
	for *gate != "" {
		if _, err := os.Stat(*gate); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var opts *mcp.ServerOptions
	if *version != "" {
		opts = &mcp.ServerOptions{SupportedProtocolVersions: []string{*version}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "zeroclaw-test-server", Version: "1"}, opts)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "add two numbers", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, func(ctx context.Context, req *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d", in.A+in.B)}}}, addOut{Sum: in.A + in.B}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "wait until cancelled"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "write content to path"}, func(ctx context.Context, req *mcp.CallToolRequest, in writeIn) (*mcp.CallToolResult, any, error) {
		text := "wrote " + in.Path
		if err := os.WriteFile(in.Path, []byte(in.Content), 0o644); err != nil {
			text = "could not write: " + err.Error()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	// Questions to the user, the way the current protocol asks them
	// (multi round-trip, SEP-2322): the call answers with its input
	// requests, and the client calls again with the answers.
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "ask the user a question (elicitation, form mode)"}, func(ctx context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
		if len(req.Params.InputResponses) == 0 {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Mode: "form", Message: in.Question,
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)}}}, nil, nil
		}
		res, ok := req.Params.InputResponses["q"].(*mcp.ElicitResult)
		if !ok {
			return text("no answer"), nil, nil
		}
		b, _ := json.Marshal(res.Content)
		return text(res.Action + " " + string(b)), nil, nil
	})
	// A form with a field of each type, each with a default, in an order
	// that is not the alphabet's.
	mcp.AddTool(s, &mcp.Tool{Name: "survey", Description: "ask the user a typed form with defaults"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		if len(req.Params.InputResponses) == 0 {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &mcp.ElicitParams{Mode: "form", Message: "About you",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{
					"zname":{"type":"string","title":"Name","default":"Ada"},
					"age":{"type":"integer","minimum":0,"maximum":150,"default":36},
					"score":{"type":"number","default":9.5},
					"status":{"type":"string","enum":["active","away"],"default":"active"},
					"verified":{"type":"boolean","default":true}},"required":["zname"]}`)}}}, nil, nil
		}
		res, ok := req.Params.InputResponses["s"].(*mcp.ElicitResult)
		if !ok {
			return text("no answer"), nil, nil
		}
		b, _ := json.Marshal(res.Content)
		return text(res.Action + " " + string(b)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "visit", Description: "send the user to a page (elicitation, url mode)"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		URL string `json:"url,omitempty"`
	}) (*mcp.CallToolResult, any, error) {
		if in.URL == "" {
			in.URL = "https://example.com/login"
		}
		if len(req.Params.InputResponses) == 0 {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"v": &mcp.ElicitParams{Mode: "url", Message: "Sign in to the test service",
				URL: in.URL, ElicitationID: "e-1"}}}, nil, nil
		}
		res, ok := req.Params.InputResponses["v"].(*mcp.ElicitResult)
		if !ok {
			return text("no answer"), nil, nil
		}
		return text(res.Action), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "count", Description: "count to three, saying how far it is (progress)"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 3; i++ {
			if tok := req.Params.GetProgressToken(); tok != nil {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
			}
		}
		// The client handles what it is sent in order: once it answered
		// a ping, it has taken the progress before the result.
		if err := req.Session.Ping(ctx, nil); err != nil {
			return text("ping: " + err.Error()), nil, nil
		}
		return text("counted"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "add a tool named grown (tools/list_changed)"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: "grown", Description: "a tool added while the server runs"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			return text("grown"), nil, nil
		})
		return text("grew"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "list the client's roots"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		if len(req.Params.InputResponses) == 0 {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}}, nil, nil
		}
		res, ok := req.Params.InputResponses["r"].(*mcp.ListRootsResult)
		if !ok {
			return text("no roots"), nil, nil
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return text(fmt.Sprint(uris)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "summarise", Description: "ask the client's model (sampling)"}, func(ctx context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
		if len(req.Params.InputResponses) == 0 {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &mcp.CreateMessageParams{MaxTokens: 50, SystemPrompt: "be brief",
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Question}}}}}}, nil, nil
		}
		// The SDK decodes the answer in its richer form (content blocks).
		switch res := req.Params.InputResponses["s"].(type) {
		case *mcp.CreateMessageResult:
			if t, ok := res.Content.(*mcp.TextContent); ok {
				return text("the model (" + res.Model + ") said: " + t.Text), nil, nil
			}
		case *mcp.CreateMessageWithToolsResult:
			for _, c := range res.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					return text("the model (" + res.Model + ") said: " + t.Text), nil, nil
				}
			}
		}
		return text("not text"), nil, nil
	})
	// A tool only a client that runs tasks can call: its listing says so
	// (taskMark adds execution.taskSupport, which this SDK has no field
	// for), and a plain call fails as such a server's does.
	mcp.AddTool(s, &mcp.Tool{Name: "job", Description: "a long job (needs tasks)"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("job must be called as a task")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "shot", Description: "take a screenshot (an image, and a sound)"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the screen:"},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nSCREEN")},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFFWAVE")}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "exit the server"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "review", Description: "review a file", Arguments: []*mcp.PromptArgument{
		{Name: "file", Required: true}, {Name: "style"}}}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		style := req.Params.Arguments["style"]
		if style == "" {
			style = "plain"
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{
			Text: "Review " + req.Params.Arguments["file"] + " in the " + style + " style."}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://greeting", Name: "greeting", MIMEType: "text/plain"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://greeting", MIMEType: "text/plain", Text: "hello from a resource"}}}, nil
	})
	if *httpAddr != "" {
		ln, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("http://%s/mcp\n", ln.Addr())
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		var served http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(markedResponse{w}, r)
		})
		if *oauth {
			served = newAuthServer("http://"+ln.Addr().String(), *expiresIn, *clientID).protect(served)
		}
		log.Fatal(http.Serve(ln, served))
	}
	if err := s.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: taskMark{os.Stdout}}); err != nil {
		log.Fatal(err)
	}
}

// taskMark marks the job tool as needing tasks in what the server sends.
type taskMark struct{ w io.WriteCloser }

func (t taskMark) Write(b []byte) (int, error) {
	marked := bytes.ReplaceAll(b, []byte(`"name":"job"`), []byte(`"execution":{"taskSupport":"required"},"name":"job"`))
	if _, err := t.w.Write(marked); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (t taskMark) Close() error { return t.w.Close() }

// markedResponse is taskMark for the HTTP transport.
type markedResponse struct{ http.ResponseWriter }

func (m markedResponse) Write(b []byte) (int, error) {
	if _, err := m.ResponseWriter.Write(bytes.ReplaceAll(b, []byte(`"name":"job"`), []byte(`"execution":{"taskSupport":"required"},"name":"job"`))); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (m markedResponse) Flush() { m.ResponseWriter.(http.Flusher).Flush() }
