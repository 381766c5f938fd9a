# Multi-stage build of the one sika binary.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sika ./cmd/sika

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sika /usr/local/bin/sika
USER nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/sika"]
CMD ["api"]
