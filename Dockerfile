# Build a static binary, then run it from a distroless image as a non-root user.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X acctapi/cmd.version=${VERSION} -X acctapi/cmd.commit=${COMMIT}" \
    -o /out/acctapi . \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/acctapi /usr/local/bin/acctapi
COPY --from=build --chown=nonroot:nonroot /out/data /data
USER nonroot:nonroot
ENV ACCTAPI_ADDR=0.0.0.0:8080 \
    ACCTAPI_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
# distroless has no shell or curl: the binary asks the server itself.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/acctapi", "health"]
ENTRYPOINT ["/usr/local/bin/acctapi"]
CMD ["serve"]
